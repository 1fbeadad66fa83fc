import click
@click.command("plan")
def command() -> None:
    """stub"""

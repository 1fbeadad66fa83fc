import click
@click.command("analyze")
def command() -> None:
    """stub"""
